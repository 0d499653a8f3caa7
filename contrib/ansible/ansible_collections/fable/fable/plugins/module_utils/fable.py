# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)
"""Running the fable binary for the fable.fable modules.

fable prints one JSON document on stdout with ``--json``. The modules read ``changed`` (a dry
run's ``would_change``) and ``ok`` from its top level; a document without ``ok`` (fable before
the common JSON envelope) is ok exactly when the exit code is 0. A failure's message is ``error.message`` when fable
printed one, else its stderr. Exit code 5 means another fable run holds the install lock:
the command is retried a few times. ``scope: machine`` runs fable with its global flag
``--scope machine`` (before the subcommand), ``machine_root`` in its environment as
``FABLE_SYSTEM_ROOT`` (fable's ``--root``); that scope's fable home is
``<root>/var/lib/fable``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

# fable's exit code when the install lock stayed busy (fable itself waits for it first).
LOCK_BUSY = 5
# The environment variable rooting every machine-wide path of fable (its `--root DIR`).
SYSTEM_ROOT = 'FABLE_SYSTEM_ROOT'

COMMON_ARGS = dict(
    fable_bin=dict(type='str', default='fable'),
    fable_home=dict(type='path'),
    lock_wait=dict(type='float'),
    retries=dict(type='int', default=3),
    retry_delay=dict(type='float', default=5.0),
    scope=dict(type='str', default='user', choices=['user', 'machine']),
    machine_root=dict(type='path'),
)


def scope_of(module):
    """``scope``, refusing the options that do not go with it."""
    scope = module.params.get('scope') or 'user'
    if module.params.get('machine_root') and scope != 'machine':
        module.fail_json(msg='machine_root is only for scope: machine')
    if module.params.get('fable_home') and scope == 'machine':
        module.fail_json(msg='fable_home is only for scope: user (the machine scope\'s fable home '
                             'is <machine_root>/var/lib/fable)')
    return scope


def machine_root(module):
    """The system root of the machine scope: ``machine_root``, else $FABLE_SYSTEM_ROOT, else /."""
    root = module.params.get('machine_root') or os.environ.get(SYSTEM_ROOT) or '/'
    return os.path.abspath(os.path.expanduser(root))


def fable_home(module):
    """The fable home the command uses: ``fable_home``, else $FABLE_HOME, else ~/.fable; in the
    machine scope ``<machine_root>/var/lib/fable``."""
    if scope_of(module) == 'machine':
        return os.path.join(machine_root(module), 'var', 'lib', 'fable')
    home = module.params.get('fable_home') or os.environ.get('FABLE_HOME')
    if not home:
        user = os.environ.get('HOME')
        if not user:
            module.fail_json(msg='HOME is not set on the managed host; set fable_home')
        home = os.path.join(user, '.fable')
    return os.path.abspath(os.path.expanduser(home))


def default_inventory(module):
    """The inventory fable reads without -f: $FABLE_INVENTORY, else $FABLE_HOME/fleet.toml (in
    the machine scope always the machine's home's fleet.toml)."""
    inventory = os.environ.get('FABLE_INVENTORY')
    if inventory and scope_of(module) == 'user':
        return os.path.abspath(os.path.expanduser(inventory))
    return os.path.join(fable_home(module), 'fleet.toml')


def fable_binary(module):
    """The fable executable: a path as given, else looked up on PATH (fails when absent)."""
    name = module.params['fable_bin']
    if os.sep in name:
        path = os.path.expanduser(name)
        if not os.access(path, os.X_OK):
            module.fail_json(msg='fable_bin %s is not an executable file' % path)
        return path
    return module.get_bin_path(name, required=True)


def scope_args(module):
    """fable's global flags for ``scope``: none for the user scope (fable's default), else
    ``--scope machine``."""
    scope = scope_of(module)
    return [] if scope == 'user' else ['--scope', scope]


def run_fable(module, args, cwd=None):
    """Runs ``fable [--scope machine] ARGS --json``; returns (rc, document or None, stdout,
    stderr, argv).

    Retries while fable reports the install lock busy (exit code 5).
    """
    cmd = [fable_binary(module)] + scope_args(module) + list(args) + ['--json']
    env = {}
    if module.params.get('machine_root'):
        env[SYSTEM_ROOT] = machine_root(module)
    if module.params.get('fable_home'):
        env['FABLE_HOME'] = fable_home(module)
    if module.params.get('lock_wait') is not None:
        env['FABLE_INSTALL_LOCK_WAIT_MS'] = str(int(module.params['lock_wait'] * 1000))
    attempts = max(0, module.params['retries']) + 1
    for attempt in range(attempts):
        rc, out, err = module.run_command(cmd, environ_update=env, cwd=cwd)
        if rc != LOCK_BUSY or attempt + 1 == attempts:
            break
        time.sleep(module.params['retry_delay'])
    doc = None
    if out.strip():
        try:
            doc = json.loads(out)
        except ValueError:
            doc = None
    return rc, doc, out, err, cmd


def is_ok(rc, doc):
    """fable's verdict: ``ok`` when the document carries it, else exit code 0."""
    if isinstance(doc, dict) and 'ok' in doc:
        return bool(doc['ok']) and rc == 0
    return rc == 0 and isinstance(doc, dict)


def error_of(doc):
    """The error object of a failed run's document, when fable printed one."""
    if isinstance(doc, dict) and isinstance(doc.get('error'), dict):
        return doc['error']
    return {}


def failure_message(what, rc, doc, err):
    """One line saying why ``what`` failed: ``error.message``, else stderr, else the code."""
    message = error_of(doc).get('message')
    if not message:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        message = ' '.join(lines) if lines else None
    if not message:
        if rc == LOCK_BUSY:
            message = 'the install lock stayed busy (another fable run holds it)'
        elif rc == 0:
            message = 'fable printed no JSON document'
        else:
            message = 'exit code %d' % rc
    return '%s failed: %s' % (what, message)


def fail(module, what, rc, doc, out, err, cmd, **extra):
    """Fails the task with fable's message and what it printed."""
    result = dict(extra)
    result.update(
        msg=failure_message(what, rc, doc, err),
        rc=rc,
        cmd=cmd,
        error=error_of(doc) or None,
        stdout=out,
        stderr=err,
    )
    module.fail_json(**result)
