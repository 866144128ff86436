"""GPU serving: which device an artifact serves on, the onnxruntime build it ships, fp16 weights.

A domain package with no AWS calls: it imports the primitives, the image table, the artifact files and
conversion; the spec, preflight, packing and the local SageMaker import it.
"""
