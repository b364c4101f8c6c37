"""The definition pipeline of the fork track: what a tool's definition is
checked against and the schemas it is served and enforced with (see
CONTRIBUTING.md, "The house").
"""
