"""The write-back gate: did this turn leave something memory should keep, and was it kept?"""
