"""Goldens for lab 15 (A Mini-GPT that learns a verb grammar), computed with NumPy and PyTorch.

Run from the repository root:  /usr/bin/python3 tests/15_mini_gpt/gen_goldens.py
Writes tests/15_mini_gpt/golden/*.npy (hidden) and labs/15_mini_gpt/golden/*.npy (public).

(Placeholder until the lab's tests land: it writes nothing yet. The model and
corpus in PyTorch are tests/15_mini_gpt/pilot.py and verb_grammar.py.)
"""


def main():
    print("lab 15: no goldens yet")


if __name__ == "__main__":
    main()
