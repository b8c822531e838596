# perfedavg/worked-notes-4g-eval-alpha-then-beta: every expected number of golden/perfedavg/worked-notes-4g-eval-alpha-then-beta.json
# (the run replayed by proofs/gappa/make_vectors.py; do not edit)
# bound: |fl - exact| <= 0.375 u at most (4.16e-17), 10 numbers
# tolerance: atol 1e-14, rtol 1e-14; tightest margin at record 6 (value -0.55): tolerance 1.55e-14 = 160 x (bound 4.16e-17 + half an ulp)
# control: none (the kernels' scripts carry the controls)
@rnd = float<ieee_64, ne>;
r1 rnd= 0 - 1;
x2 = 0 - 1;
r3 rnd= 1b1 * r1;
x4 = 1b1 * x2;
r5 rnd= 3602879701896397b-55 * r3;
x6 = 3602879701896397b-55 * x4;
r7 rnd= 0 - r5;
x8 = 0 - x6;
r9 rnd= r7 - 1;
x10 = x8 - 1;
r11 rnd= 1b1 * r9;
x12 = 1b1 * x10;
r13 rnd= 1b-1 * r11;
x14 = 1b-1 * x12;
r15 rnd= r7 - r13;
x16 = x8 - x14;
r17 rnd= 0 - -1;
x18 = 0 - -1;
r19 rnd= 1 * r17;
x20 = 1 * x18;
r21 rnd= 3602879701896397b-55 * r19;
x22 = 3602879701896397b-55 * x20;
r23 rnd= 0 - r21;
x24 = 0 - x22;
r25 rnd= r23 - -1;
x26 = x24 - -1;
r27 rnd= 1 * r25;
x28 = 1 * x26;
r29 rnd= 1b-1 * r27;
x30 = 1b-1 * x28;
r31 rnd= r23 - r29;
x32 = x24 - x30;
{ |0 - 0| <= 0 /\ |r7 - x8| <= 0 /\ |r15 - x16| <= 0 /\ |r23 - x24| <= 0 /\ |r31 - x32| <= 3b-56 }
