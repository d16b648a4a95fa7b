include $(sort $(wildcard $(BR2_EXTERNAL_STAGEBOX_PATH)/package/*/*.mk))
