"""deploybench: deploy, benchmark and diagnose encoder models on Amazon SageMaker."""
