// placeholder: the MPI runtime lands here
