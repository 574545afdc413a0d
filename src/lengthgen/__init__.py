"""lengthgen: the shared package of the executable book *Length Generalization, Executable*.

Its layout by role (infrastructure, page code, ``engine``, ``nn``, one package per chapter) is
described in ``book/engine.md`` and the README. Importing the package runs no computation."""

__version__ = "0.1.0"
