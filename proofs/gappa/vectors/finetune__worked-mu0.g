# finetune/worked-mu0: every expected number of golden/finetune/worked-mu0.json
# (the run replayed by proofs/gappa/make_vectors.py; do not edit)
# bound: |fl - exact| <= 0 u at most (0), 5 numbers
# tolerance: atol 1e-15, rtol 1e-14; tightest margin at record 1 (value 2.375): tolerance 2.47e-14 = 111 x (bound 0 + half an ulp)
# control: none (the kernels' scripts carry the controls)
@rnd = float<ieee_64, ne>;
r1 rnd= 3b-2 - 1b2;
x2 = 3b-2 - 1b2;
r3 rnd= 1 * r1;
x4 = 1 * x2;
r5 rnd= 1b-1 * r3;
x6 = 1b-1 * x4;
r7 rnd= 3b-2 - r5;
x8 = 3b-2 - x6;
r9 rnd= r7 - 1b2;
x10 = x8 - 1b2;
r11 rnd= 1 * r9;
x12 = 1 * x10;
r13 rnd= 1b-1 * r11;
x14 = 1b-1 * x12;
r15 rnd= r7 - r13;
x16 = x8 - x14;
{ |3b-2 - 3b-2| <= 0 /\ |r7 - x8| <= 0 /\ |r15 - x16| <= 0 }
