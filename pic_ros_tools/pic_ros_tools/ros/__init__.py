"""
The ROS 2 tools: the simulated robot, replay, the demo, the live evaluation and the benches.

- :mod:`pic_ros_tools.ros.sim_robot_node`: the MuJoCo robot, trajectories in, ``joint_states``
  out;
- :mod:`pic_ros_tools.ros.replay_node`: a rosbag2 played with its original timing;
- :mod:`pic_ros_tools.ros.demo`, :mod:`pic_ros_tools.ros.live_evaluation`: the pipeline of
  :mod:`pic_ros.ros` as separate processes on a recording, drawn and scored;
- :mod:`pic_ros_tools.ros.latency_bench`, :mod:`pic_ros_tools.ros.stress_bench`: the benches.
"""
