"""The Plan Package: six artifacts, evidence markers and the derived LoopSpec."""
