"""Planning: usage records in, offset plans and shared-object plans out."""
