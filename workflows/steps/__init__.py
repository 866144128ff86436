"""One module per pipeline step; each exposes one function a Lambda handler calls."""
