"""Reverse mode's front ends: tensors (the PyTorch dialect), their recording and in-place writes,
``GradientTape`` and ``Variable`` (the TensorFlow dialect), reading tapes, anomaly detection."""
