"""busy.py - a small CPU-bound Python program for `make demo`: a thread,
a subprocess, and three kinds of work in about 3:2:1 proportion."""
import hashlib
import subprocess
import threading


def primes(limit):
    """Sieve-free prime counting: pure interpreter work."""
    count = 0
    for n in range(2, limit):
        d = 2
        while d * d <= n:
            if n % d == 0:
                break
            d += 1
        else:
            count += 1
    return count


def digest(rounds):
    """Hashing: the time goes to libcrypto, not to the interpreter."""
    h = b"profil"
    for _ in range(rounds):
        h = hashlib.sha256(h * 64).digest()
    return h.hex()


def sort_words(n):
    """Sorting strings: the interpreter's C code (list.sort)."""
    words = [str((i * 7919) % 100003) for i in range(n)]
    for _ in range(8):
        sorted(words)
    return len(words)


worker = threading.Thread(target=digest, args=(120000,), name="hasher")
worker.start()
print("primes below 60000:", primes(60000))
print("sorted", sort_words(200000), "words")
worker.join()
print("child says:", subprocess.run(["echo", "hello"], capture_output=True, text=True).stdout.strip())
