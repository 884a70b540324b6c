"""`observe top`: the live terminal view (`view`) over what it shows of each server (`state`)."""
