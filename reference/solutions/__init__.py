"""Reference solutions of every lab, written in the student API.

Each file is the single source of truth of its lab: the exercise skeletons
(`exercises/<lab>/lab.py` and `lab.ipynb`) are generated from it by removing
the regions between `### BEGIN SOLUTION` and `### END SOLUTION`.
"""
