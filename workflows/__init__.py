"""deploybench: deploy, benchmark and diagnose encoder models on Amazon SageMaker.

The root holds only what every package uses: ``errors`` (every exception; the class name is the Step
Functions error name), ``models`` (the pydantic bases), ``clock``, ``backoff``, ``settings``, ``naming``
(names, tags and keys of what a run creates) and ``contracts`` (the typed request and result of every
step). Everything else lives in a package named for its domain; ``pyproject.toml``'s import-linter
contracts say which layer may import which.
"""
