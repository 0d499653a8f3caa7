# -*- coding: utf-8 -*-
# Copyright: fable contributors
# SPDX-License-Identifier: MIT OR Apache-2.0 (as fable)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options every module of the collection passes to the fable binary
    # (module_utils/fable.py, COMMON_ARGS); scope and machine_root are described per module.
    DOCUMENTATION = r'''
options:
  fable_bin:
    description: The fable executable, a path or a name looked up on C(PATH).
    type: str
    default: fable
  fable_home:
    description: Sets C(FABLE_HOME) for fable (default C(~/.fable)). Only with O(scope=user).
    type: path
  lock_wait:
    description:
      - Seconds fable waits for the install lock before it gives up with exit code 5
        (C(FABLE_INSTALL_LOCK_WAIT_MS); fable's default is 60). Ignored by a fable without it.
    type: float
  retries:
    description: How many times to run fable again when it exits 5 (the install lock busy).
    type: int
    default: 3
  retry_delay:
    description: Seconds between those attempts.
    type: float
    default: 5.0
'''
