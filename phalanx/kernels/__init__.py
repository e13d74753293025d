"""Pure array kernels, one module per upstream plugin; every function takes the array namespace `xp` first."""
