"""The rules, one module per subject: plain functions over the catalog, no I/O, each returning None
when its rule holds, else a reason a reviewer can act on. They are the only statement of each rule:
the stack spec's checks and the policy pack both call them."""
