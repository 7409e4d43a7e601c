"""Front end: bytes or text -> typed AST (``dotboxd.core.ast``).

``wire`` imports the JSON wire format strictly; ``text`` parses the readable form with the Lark
grammar in ``kernel.lark``; ``formatter`` prints any AST as text; ``canonical`` computes the
canonical encoding and module hash from the AST.
"""
