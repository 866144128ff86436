"""Images and instance kinds: which container image a spec deploys, and what an instance type carries.

``table`` reads ``data/images.yaml`` (the DLC, Triton, LMI and vLLM image URIs per region and build);
``sdk`` keeps that table true to the SageMaker SDK's own image configs; ``accelerators`` says which
accelerator an instance family has (CUDA GPU, Neuron, Gaudi or none), from ``data/instances.yaml``.

A domain package near the bottom: it imports only the primitives. The spec, hosting, preflight, the
GPU plan, the local SageMaker, the CLI's ``images`` command and the SageMaker role's image-pull grant
import it.
"""
