"""Zero and negative steps: a bias broadcast over rows and a reversed read, with an epilogue.

The nest reads x row by row, the bias b once per column (its row step is 0: a
broadcast dim) and y with both dims reversed (negative steps). The epilogue writes
the 4 outputs back to front. Run it with

    strider ttu examples/ttu_broadcast_reverse.py
"""
# array: x=3x4:C@0
# array: b=4@100
# array: y=3x4:C@200
# array: out=4@300
for r in range(3):
    for c in range(4):
        x[r, c] + b[c] + y[2 - r, 3 - c]
for e in range(4):
    out[3 - e]
