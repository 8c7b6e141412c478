"""``plangate report``: one self-contained page (HTML or Markdown) of what PlanGate decided.

The service (:mod:`plangate.report.service`) reads the ledger (verified first),
the task directories (each task judged as exec would judge it now) and the
evaluation entries once; the pure modules turn those facts into a page model
(:mod:`plangate.report.model`) and render it (:mod:`plangate.report.render_html`,
:mod:`plangate.report.render_markdown`, charts in :mod:`plangate.report.charts`).
Every value reaching the page is picked by name from a known field and escaped
by the renderer; a ledger that does not verify yields no figures.
"""
