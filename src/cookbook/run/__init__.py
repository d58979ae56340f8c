"""Running the series: :mod:`~cookbook.run.runner` (papermill), :mod:`~cookbook.run.render` (the HTML build),
:mod:`~cookbook.run.compare` (are two builds identical?), :mod:`~cookbook.run.colab` (badges and setup cells).
The Jupyter stack these need is the ``notebooks`` extra, imported lazily.
"""
