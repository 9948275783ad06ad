"""Whether the sensors and the schedule start running: yes, unless ``KA_AUTOMATION`` turns
automation off (browser tests and screenshots start with nothing running on its own)."""

from __future__ import annotations

import dagster as dg

from knowledge_assets.core.settings import automation_enabled


def sensor_status() -> dg.DefaultSensorStatus:
    """The status a sensor starts with in a new deployment."""
    running = automation_enabled()
    return dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED


def schedule_status() -> dg.DefaultScheduleStatus:
    """The status a schedule starts with in a new deployment."""
    running = automation_enabled()
    return dg.DefaultScheduleStatus.RUNNING if running else dg.DefaultScheduleStatus.STOPPED
