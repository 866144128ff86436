"""Conversion of a Hugging Face encoder to a verified ONNX artifact folder."""
