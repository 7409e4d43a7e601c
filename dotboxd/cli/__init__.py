"""The ``dotboxd`` command line."""
