"""An example untrusted job for `dotboxd worker run`: main(input) returns a JSON value."""


def main(data):
    return {"primes": [n for n in range(2, data["below"]) if all(n % d for d in range(2, int(n**0.5) + 1))]}
