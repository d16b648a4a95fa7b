################################################################################
#
# stagebox
#
################################################################################

# Stagebox is not compiled here: tools/build-static --target aarch64 (Debian's
# swiftlang 6.0.3 in a chroot, see the README) builds it into a static tree, which this package copies
# into the target. The tree is the package's local site, so Buildroot rsyncs
# only that directory (a binary and the alsa-lib data), never the checkout;
# "make stagebox-rebuild" picks up a new build.
# (The option is unset while the package is disabled, hence the fallback.)
STAGEBOX_STATIC_TREE = \
	$(or $(call qstrip,$(BR2_PACKAGE_STAGEBOX_STATIC_TREE)), \
		$(BR2_EXTERNAL_STAGEBOX_PATH)/../.build/static/$(ARCH))
STAGEBOX_SITE = $(abspath $(STAGEBOX_STATIC_TREE))
STAGEBOX_SITE_METHOD = local

# The static binary must read the alsa.conf of the alsa-lib it was linked with,
# which may be older than the image's alsa-lib: it gets a copy of its own in
# /usr/share/stagebox/alsa, and S95stagebox points ALSA_CONFIG_DIR there. The
# image's alsa-lib (aplay, amixer) keeps its /usr/share/alsa.

define STAGEBOX_CHECK_STATIC_TREE
	@if [ ! -x $(STAGEBOX_SITE)/usr/bin/stagebox ]; then \
		printf '%s\n' \
			"stagebox: $(STAGEBOX_SITE)/usr/bin/stagebox is missing." \
			"Build it first, from the Stagebox checkout:" \
			"    tools/build-static --target $(ARCH)" \
			"or set BR2_PACKAGE_STAGEBOX_STATIC_TREE to the tree it wrote." >&2; \
		exit 1; \
	fi
	@if [ ! -f $(STAGEBOX_SITE)/usr/share/alsa/alsa.conf ]; then \
		printf '%s\n' \
			"stagebox: $(STAGEBOX_SITE)/usr/share/alsa/alsa.conf is missing." \
			"Build the static tree again:" \
			"    tools/build-static --target $(ARCH)" >&2; \
		exit 1; \
	fi
endef
STAGEBOX_PRE_RSYNC_HOOKS += STAGEBOX_CHECK_STATIC_TREE

define STAGEBOX_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/usr/bin/stagebox $(TARGET_DIR)/usr/bin/stagebox
	rm -rf $(TARGET_DIR)/usr/share/stagebox/alsa
	mkdir -p $(TARGET_DIR)/usr/share/stagebox
	cp -dpfr $(@D)/usr/share/alsa $(TARGET_DIR)/usr/share/stagebox/alsa
endef

$(eval $(generic-package))
