"""Entry point of ``python -m pic_ros``."""

import sys

from pic_ros.cli import main

sys.exit(main())
