"""
The ROS 2 layer: thin rclpy nodes around the core (the only package that imports rclpy).

- :mod:`pic_ros.ros.skeleton_node`: tracker -> ``skeleton``;
- :mod:`pic_ros.ros.solver_node`: ``skeleton`` -> ``joint_targets``;
- :mod:`pic_ros.ros.trajectory_publisher_node`: ``joint_targets`` ->
  ``<controller>/joint_trajectory``;
- :mod:`pic_ros.ros.teleop`: the three in one process.
"""
