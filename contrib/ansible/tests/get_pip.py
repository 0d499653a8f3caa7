"""A local stand-in for ansible-test's pip bootstrap script.

`ansible-test sanity` makes a virtual environment without pip for each test and downloads
https://ci-files.testing.ansible.com/ansible-test/get-pip-<version>.py to put pip in it; that
host is off limits here (only PyPI is reachable). This script does what get-pip does, from
Python's own bundled pip (ensurepip), then upgrades to the version asked for from the package
index (PyPI). sanity.sh copies it where ansible-test looks for its cached script.
"""

import subprocess
import sys


def main():
    # get-pip's own flags; the rest are `pip install` arguments (pip==VERSION, options).
    args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
    subprocess.check_call([sys.executable, '-m', 'ensurepip', '--default-pip'],
                          stdout=subprocess.DEVNULL)
    subprocess.check_call([sys.executable, '-m', 'pip', 'install', '-q', '--upgrade'] + args)


if __name__ == '__main__':
    main()
