"""Flag a chat message that mentions a blocked word in any letter case (the twin of moderation.dbk).

`string.toLowerInvariant` folds case once and `string.contains` searches, so the fuel grows linearly
with the message and `dotboxd prove` bounds it from the policy's maxStringLength. Both built-ins
belong to the extension surface `dotboxd-1+ext1`: a policy with `"languageSurface": "dotboxd-1"`
refuses this kernel with E-CALL-SURFACE.
"""

from dotboxd.lang import I32, String, entrypoint, module

module("chat-moderation", version="1.0.0")


@entrypoint
def main(message: String) -> I32:
    text = string.toLowerInvariant(message)
    hits = 0
    if string.contains(text, "spam"):
        hits = hits + 1
    if string.contains(text, "scam"):
        hits = hits + 1
    if string.contains(text, "free money"):
        hits = hits + 1
    return hits
