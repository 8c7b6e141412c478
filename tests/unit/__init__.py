"""Test package: module names stay unique where test files mirror modules of the same name."""
