"""Running untrusted student code: the worker process, its limits and its private channel."""
