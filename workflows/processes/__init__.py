"""Child processes bound to the life of the process that started them, and reaped when they outlive it.

``guardian`` leads each child's process group and kills it when the lifeline pipe from its owner closes
(even after SIGKILL of the owner); ``groups`` records each group under the cache, so the next local run
and ``deploybench janitor --local`` reap the groups of a run that is gone.

A domain package: it imports the primitives and the container environment's cache root; the local
SageMaker, the bounded conversion pass, the engines and the CLI's janitor import it.
"""
