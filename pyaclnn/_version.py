"""pyaclnn's version, written in this one place.

pyproject.toml reads it for the package metadata (``[tool.setuptools.dynamic]``) and
``pyaclnn.__version__`` imports it, so the two cannot disagree.
"""

__version__ = "0.1.0"
