"""Solvers apart from their uses (as scikit-network keeps ``linalg/ppr_solver.py`` apart from ``ranking``):
:mod:`~cookbook.linalg.ppr`, Personalized PageRank on a prebuilt transition matrix.
"""
