"""Entry point of ``python -m pic_ros_tools``."""

import sys

from pic_ros_tools.cli import main

sys.exit(main())
