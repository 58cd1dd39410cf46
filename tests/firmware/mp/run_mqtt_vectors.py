# Real MicroPython: every MQTT packet vector against rbnode.mqtt (run by test_mqtt_micropython).
import sys

import mqtt_vectors

from rbnode import mqtt

n = mqtt_vectors.check_all(mqtt)
print("MQTT-VECTORS-OK", n, sys.implementation.name)
