"""Pydantic models for Agent Trajectory Interchange Format (ATIF).

This module provides Pydantic models for validating and constructing
trajectory data following the ATIF specification (RFC 0001).
"""

from harbor.models.trajectories.agent import Agent
from harbor.models.trajectories.content import (
    AudioSource,
    ContentPart,
    ImageSource,
)
from harbor.models.trajectories.final_metrics import FinalMetrics
from harbor.models.trajectories.metrics import Metrics
from harbor.models.trajectories.observation import Observation
from harbor.models.trajectories.observation_result import ObservationResult
from harbor.models.trajectories.step import Step
from harbor.models.trajectories.subagent_trajectory_ref import SubagentTrajectoryRef
from harbor.models.trajectories.tool_call import ToolCall
from harbor.models.trajectories.trajectory import Trajectory

__all__ = [
    "Agent",
    "AudioSource",
    "ContentPart",
    "FinalMetrics",
    "ImageSource",
    "Metrics",
    "Observation",
    "ObservationResult",
    "Step",
    "SubagentTrajectoryRef",
    "ToolCall",
    "Trajectory",
]
