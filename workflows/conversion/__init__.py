"""Conversion of a Hugging Face encoder to a verified ONNX artifact folder.

A Hugging Face folder or Hub id is exported, optimised, quantised and checked for parity and collapse,
and cached by its inputs. A domain package: it imports the primitives, ``workflows.aws``, the spec, the
artifact files and the GPU plan; the ConvertToOnnx step, remediation, the canary and the CLI import it.
"""
