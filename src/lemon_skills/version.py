"""The package's version, in a module of its own so that code inside the library can name it
without importing the package root (the composition root, which names every layer)."""

__version__ = "0.1.0"
