"""The container's environment, rebuilt here: the libraries of the image a spec deploys, and the
pre-spend canary that asks a packed artifact to answer inside them.

``versions`` reads which transformers, torch and toolkit each image ships (from the image table);
``environment`` builds that environment once per library set under the cache (a locked, atomic build:
a half-built one is wiped); ``canary`` unpacks an artifact, installs its ``code/requirements.txt`` as the
image's toolkit would, and calls ``code/inference.py`` once per task; ``cpu_stand_in`` lets a GPU artifact run on this machine's CPU,
labelled so in its log and every answer.

A domain package: it imports the primitives, ``workflows.images``, ``workflows.aws`` and the hosting
image choice; the local SageMaker serves its containers in ``environment``, and RunPreflight (local
engine) and ``deploybench run`` (before any spend on AWS) run ``canary``.
"""
