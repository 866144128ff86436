"""GPU serving: which device an artifact serves on, the onnxruntime build it ships, fp16 weights."""
