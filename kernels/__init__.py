"""Reusable image and text kernel functions with Numba (CPU) and CuPy (GPU) backends.

This package never imports :mod:`kcca_desc`.
"""
