"""One self-test result: a name, ok or not, and the reasons it failed."""


class Check:
    def __init__(self, name):
        self.name = name
        self.ok = True
        self.details = []

    def fail(self, detail):
        self.ok = False
        self.details.append(detail)
