"""Child processes bound to the life of the process that started them, and reaped when they outlive it."""
