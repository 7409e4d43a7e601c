"""The reference interpreter: a small tree walker that is the semantic oracle for every backend."""
