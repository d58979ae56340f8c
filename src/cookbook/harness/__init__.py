"""The harness that measures and checks the stages: :mod:`~cookbook.harness.bench` (timing, manifests),
:mod:`~cookbook.harness.experiments` (the experiments the notebooks and benchmarks run),
:mod:`~cookbook.harness.plots`, :mod:`~cookbook.harness.checks` (named, measured checks) and
:mod:`~cookbook.harness.exercises` (the self-checking exercises).
"""
