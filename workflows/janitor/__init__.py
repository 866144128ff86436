"""The janitor: what a run may leave behind and how it is found and removed.

``lifetime`` says when a run's resources expire (the ``deploybench:expires-at`` tag: the longest path
the spec allows through the pipeline, plus a margin); ``leaks`` finds managed resources past it;
``scaling`` the Application Auto Scaling targets and alarms they leave; ``cleanup`` removes them and
publishes what it removed (the hourly Janitor function and ``deploybench janitor``).

A domain package: it imports the primitives, ``workflows.aws.clients``, ``workflows.naming``, the hosting
resource kinds and, for the lifetime, the state machines' function table; the Janitor handler, the
CLI, the benchmark job's limits and the CDK stack import it.
"""
