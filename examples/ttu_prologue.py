"""Seed 000, program 212: prologue and main loop nest on one tensor traversal unit.

The prologue loop reads the int array V1 (3 bias values at base address 12), then the
main nest walks the tensor V2 (seed 001's layout: steps i=2, j=6, k=1). Expected:
row V1 initial 12, step 1, end 15; stream 12, 13, 14, then 0, 1, 6, 7, 2, 3, 8, 9, 4, 5,
10, 11. Run it with

    strider ttu examples/ttu_prologue.py

The ``# array:`` lines below give the layouts (the same syntax as ``--array``).
"""
# array: V1=3@12
# array: V2=3x2x2/2,6,1@0
for h in range(3):
    V1[h]
for i in range(3):
    for j in range(2):
        for k in range(2):
            V2[i][j][k]
